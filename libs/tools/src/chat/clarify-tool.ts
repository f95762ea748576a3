import { z } from 'zod';
import { defineTool } from '../shared/tool.ts';

export const CLARIFY_MAX_CHOICES = 10;

const schema = z.object({
  question: z.string().trim().min(1, { error: 'ask a question' }).max(2000),
  choices: z
    .array(z.string().trim().min(1).max(200))
    .max(CLARIFY_MAX_CHOICES, { error: `at most ${CLARIFY_MAX_CHOICES} choices` })
    .optional()
    .describe('Shown as buttons where the platform has them; the person may answer otherwise'),
});

/**
 * Hermes' clarify: the turn is parked on the question (no worker waits), and resumes with the
 * answer on whichever worker picks the session up next.
 */
export const clarifyTool = defineTool({
  name: 'clarify',
  toolset: 'clarify',
  description: 'Ask the person a question and wait for the answer; offer choices when the likely answers are few.',
  guidance: 'clarify: ask the person when a request is ambiguous in a way that matters; do not ask what you can find out yourself.',
  schema,
  // The question is stored once per call; asking again on resume returns the stored answer.
  replaySafe: true,
  async execute(args, context) {
    const result = await context.askPerson(args.question, args.choices);
    if (!result.answered) return 'The person did not answer in time. Proceed with your best judgement and say what you assumed, or stop and say what you need.';
    return `The person answered: ${result.answer ?? ''}`;
  },
});
