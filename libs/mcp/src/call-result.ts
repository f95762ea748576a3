import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

type Block = CallToolResult['content'][number];

function blockText(block: Block): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
    case 'audio':
      // Attachments are not passed to the model yet: the note says what was left out.
      return `[${block.type} dropped: ${block.mimeType}, ${Math.round((block.data.length * 3) / 4)} bytes; MCP ${block.type}s are not passed on]`;
    case 'resource':
      return 'text' in block.resource ? block.resource.text : `[binary resource dropped: ${block.resource.uri}]`;
    case 'resource_link':
      return `[resource: ${block.uri}${block.name ? ` (${block.name})` : ''}]`;
    default:
      return '';
  }
}

/**
 * A call's result as the tool result text: its text blocks joined, images and binary data
 * replaced by a note, structured content as JSON when there is no text. The length cap is the
 * tool gate's, as for every tool.
 */
export function resultText(result: CallToolResult): string {
  const parts = (result.content ?? []).map(blockText).filter((text) => text !== '');
  if (parts.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return parts.join('\n');
}
