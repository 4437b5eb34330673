export { HttpErrorFilter } from './http/http-error.filter';
