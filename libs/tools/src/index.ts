export * from './tool-config';
