import type { Metadata, Sharp } from 'sharp';

/**
 * sharp (libvips) loads on the first image that needs scaling, not with every process that imports
 * this library; it stays outside the CLI bundle (scripts/bundle.mjs), being native.
 */
let loading: Promise<(input: Buffer) => Sharp> | undefined;
function sharpOf(bytes: Buffer): Promise<Sharp> {
  loading ??= import('sharp').then((module) => module.default);
  return loading.then((sharp) => sharp(bytes));
}

/** What a provider accepts as one image: the encoded size, and the pixels on the long and short side. */
export interface ImageLimits {
  readonly maxBytes: number;
  readonly maxLongSide: number;
  readonly maxShortSide: number;
}

/** Anthropic scales anything past about 1568 px on the long side down itself, and refuses over 5 MB. */
export const ANTHROPIC_IMAGE_LIMITS: ImageLimits = { maxBytes: 5 * 1024 * 1024, maxLongSide: 1568, maxShortSide: 1568 };

/** OpenAI's high detail: within 2048x2048, then 768 px on the short side; 20 MB a request image. */
export const OPENAI_IMAGE_LIMITS: ImageLimits = { maxBytes: 20 * 1024 * 1024, maxLongSide: 2048, maxShortSide: 768 };

/**
 * The limits of the provider a turn goes to, by its name. OpenAI-compatible endpoints (the
 * 'openai' provider pointed elsewhere) get OpenAI's; anything unknown the stricter Anthropic ones.
 */
export function imageLimitsFor(providerName: string): ImageLimits {
  return providerName === 'openai' ? OPENAI_IMAGE_LIMITS : ANTHROPIC_IMAGE_LIMITS;
}

export interface ModelImage {
  mime: string;
  bytes: Buffer;
}

/** How many times a re-encoded image still over the byte limit is shrunk further before giving up. */
const SHRINK_ATTEMPTS = 4;

/**
 * The image as a model may take it: unchanged when within the limits, otherwise scaled down
 * (aspect ratio kept) and re-encoded; undefined when it cannot be decoded or brought under the
 * byte limit, and the caller falls back to the file in the workspace.
 */
export async function fitImageForModel(bytes: Buffer, mime: string, limits: ImageLimits): Promise<ModelImage | undefined> {
  let meta: Metadata;
  try {
    meta = await (await sharpOf(bytes)).metadata();
  } catch {
    return undefined;
  }
  // EXIF orientations 5-8 swap the sides once the image is turned upright.
  const swapped = (meta.orientation ?? 1) >= 5;
  const width = (swapped ? meta.height : meta.width) ?? 0;
  const height = (swapped ? meta.width : meta.height) ?? 0;
  if (width === 0 || height === 0) return undefined;
  let scale = scaleFor(width, height, limits);
  if (scale === 1 && bytes.length <= limits.maxBytes) return { mime, bytes };
  for (let attempt = 0; attempt <= SHRINK_ATTEMPTS; attempt++) {
    const resized = await encode(bytes, mime, Math.max(1, Math.round(width * scale)), Math.max(1, Math.round(height * scale)));
    if (resized === undefined) return undefined;
    if (resized.bytes.length <= limits.maxBytes) return resized;
    scale *= 0.7;
  }
  return undefined;
}

function scaleFor(width: number, height: number, limits: ImageLimits): number {
  const long = Math.max(width, height);
  const short = Math.min(width, height);
  return Math.min(1, limits.maxLongSide / long, limits.maxShortSide / short);
}

/**
 * Turned upright, resized and re-encoded: PNG and WebP stay so (transparency, screenshots' sharp
 * text), anything else (JPEG, a GIF's first frame) becomes JPEG.
 */
async function encode(bytes: Buffer, mime: string, width: number, height: number): Promise<ModelImage | undefined> {
  try {
    const pipeline = (await sharpOf(bytes)).rotate().resize(width, height, { fit: 'fill' });
    if (mime === 'image/png') return { mime, bytes: await pipeline.png({ compressionLevel: 9 }).toBuffer() };
    if (mime === 'image/webp') return { mime, bytes: await pipeline.webp({ quality: 85 }).toBuffer() };
    return { mime: 'image/jpeg', bytes: await pipeline.flatten({ background: '#ffffff' }).jpeg({ quality: 85 }).toBuffer() };
  } catch {
    return undefined;
  }
}
