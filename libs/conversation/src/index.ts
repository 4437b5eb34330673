export type * from './snapshot';
