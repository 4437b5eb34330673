import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * AskUserQuestion is offered to every conversation unless its action opts out (seed 000). Until
 * now the flag was an opt-in that defaulted to false, so a stored false meant "never asked for",
 * not "opted out": every existing action gets the question tool, and an action that wants none
 * sets askUserQuestion: false again.
 */
export class AskUserQuestionDefault1732200019000 implements MigrationInterface {
  name = 'AskUserQuestionDefault1732200019000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('alter table cat_actions alter column ask_user_question set default true');
    await q.query('update cat_actions set ask_user_question = true where ask_user_question = false');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('alter table cat_actions alter column ask_user_question set default false');
  }
}
