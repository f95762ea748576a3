/**
 * The largest image handed to a model, in bytes: Anthropic's limit per image (OpenAI's is higher).
 * A larger one stays a file in the workspace, and the model is told so in one line.
 */
export const MODEL_IMAGE_MAX_BYTES = 5 * 1024 * 1024;

/**
 * Model names known to take images (HERALD_MODEL_VISION=auto looks the model up here; on and off
 * override it). Matched against the model part of provider/model, lower case, anywhere in it, so
 * dated and routed names (openrouter's vendor/model, -2025-04-14 suffixes) match too.
 */
export const KNOWN_VISION_MODELS: readonly RegExp[] = [
  /gpt-4o/,
  /gpt-4\.1/,
  /gpt-4-turbo/,
  /gpt-4-vision/,
  /gpt-5/,
  /(^|\/)o[134](-|$)/,
  /chatgpt-4o/,
  /claude-3/,
  /claude-(sonnet|opus|haiku)-4/,
  /claude-[a-z]+-[4-9]/,
  /gemini/,
  /gemma-3/,
  /llava/,
  /bakllava/,
  /vision/,
  /-vl\b/,
  /qwen2(\.5)?-vl/,
  /pixtral/,
  /llama-?4/,
  /minicpm-v/,
  /moondream/,
];

export function modelTakesImages(model: string, setting: 'auto' | 'on' | 'off'): boolean {
  if (setting !== 'auto') return setting === 'on';
  const name = model.toLowerCase();
  return KNOWN_VISION_MODELS.some((pattern) => pattern.test(name));
}
