export { createIngressServer } from './ingress-server.ts';
export type { IngressOptions } from './ingress-server.ts';
export { PUBLIC_ROUTES, registeredRoutes, routeAccess } from './api-auth.ts';
export type { RegisteredRoute, RouteAccess } from './api-auth.ts';
export { CONSOLE_CSP, CONSOLE_PATH } from './console-routes.ts';
