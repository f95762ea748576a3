import { z } from 'zod';

export const healthView = z.object({ status: z.literal('ok') });

/** Readiness: each dependency 'ok' or why not; the queue's store under `redis` or `queue`. */
export const readinessView = z.object({ status: z.enum(['ready', 'not_ready']), postgres: z.string(), redis: z.string().optional(), queue: z.string().optional() });

export const metricsExposition = z.string().meta({ description: 'Prometheus text exposition format' });
