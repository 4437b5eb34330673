/**
 * Given/when/then for deciders (the Emmett shape):
 *   spec.given([...events]).when(command).then([...events])
 *   spec.given([...events]).when(command).thenThrows((err) => ...)
 */
export interface Decider<Command, Event, State> {
  decide(command: Command, state: State): Event[];
  evolve(state: State, event: Event): State;
  initialState(): State;
}

export function deciderSpec<Command, Event, State>(decider: Decider<Command, Event, State>) {
  return {
    given(events: Event[]) {
      const state = events.reduce(decider.evolve, decider.initialState());
      return {
        state,
        when(command: Command) {
          const run = () => decider.decide(command, state);
          return {
            then(expected: unknown[]): Event[] {
              const produced = run();
              expect(produced).toEqual(expected);
              return produced;
            },
            thenThrows(check: (error: unknown) => void): void {
              let thrown: unknown;
              try {
                run();
              } catch (err) {
                thrown = err;
              }
              expect(thrown).toBeDefined();
              check(thrown);
            },
          };
        },
      };
    },
  };
}
