import { startFakeOpenAI } from '../test/support/fake-llm.ts';
import { startStack } from '../test/support/stack.ts';
const fake = await startFakeOpenAI();
const stack = await startStack({ env: { HERALD_MODEL: 'openai/x', OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'k', HERALD_DB_POOL_SIZE: '16', HERALD_WORKER_CONCURRENCY: '64' } });
const t0 = performance.now();
let n = 0;
await Promise.all(Array.from({ length: 32 }, async (_, c) => {
  for (let i = 0; i < 15; i++) {
    const r = await stack.post('/v1/messages?wait=30', { chat_id: `p${c}`, user_id: 'u', text: `m${i}` });
    if (r.status !== 200) throw new Error(String(r.status));
    n++;
  }
}));
console.log('turns/s', (n / ((performance.now() - t0) / 1000)).toFixed(1));
await stack.stop(); await fake.close(); process.exit(0);
