export { createIngressServer } from './ingress-server.ts';
export type { IngressOptions } from './ingress-server.ts';
