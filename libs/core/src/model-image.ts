/**
 * An image given to the model (a person's attachment, a tool's screenshot): base64 bytes of a PNG,
 * JPEG, GIF or WebP. Here, not in the agent, because tools make them too.
 */
export interface ImageInput {
  mime: string;
  data: string;
}
