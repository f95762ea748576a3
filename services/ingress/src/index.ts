export { createIngressServer } from './ingress-server.ts';
export type { IngressOptions } from './ingress-server.ts';
export { CONSOLE_CSP, CONSOLE_PATH } from './console-routes.ts';
