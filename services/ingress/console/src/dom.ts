// Every piece of data reaches the page as a text node or an attribute value: nothing here parses
// HTML, so a message like <img src=x onerror=alert(1)> shows as those characters.

export type Child = Node | string | number | null | undefined | false;

export interface Attrs {
  class?: string;
  id?: string;
  href?: string;
  type?: string;
  name?: string;
  value?: string;
  title?: string;
  placeholder?: string;
  for?: string;
  role?: string;
  scope?: string;
  tabindex?: string;
  hidden?: boolean;
  disabled?: boolean;
  required?: boolean;
  open?: boolean;
  autocomplete?: string;
  rows?: string;
  list?: string;
  label?: string;
  datetime?: string;
  novalidate?: boolean;
  [attribute: `aria-${string}` | `data-${string}`]: string | undefined;
  on?: Partial<{ [K in keyof HTMLElementEventMap]: (event: HTMLElementEventMap[K]) => void }>;
}

const BOOLEAN = new Set(['hidden', 'disabled', 'required', 'open', 'novalidate']);

/** The server paths a console link may lead to. */
const SERVER_LINKS = ['/v1/auth/oidc/login'];

function setAttribute(element: HTMLElement, key: string, value: unknown): void {
  if (value === undefined || value === false) return;
  if (BOOLEAN.has(key)) {
    element.setAttribute(key, '');
    return;
  }
  // Links are the console's own hash routes, or the server's single sign-on start (a navigation away
  // and back); anything else (a javascript: URL) is refused.
  if (key === 'href' && typeof value === 'string' && !value.startsWith('#/') && !SERVER_LINKS.includes(value)) throw new Error(`refused link ${value}`);
  element.setAttribute(key, String(value));
}

/** Creates an element with attributes, listeners and children (strings become text nodes). */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === 'on') {
      for (const [event, listener] of Object.entries(value as Record<string, EventListener>)) element.addEventListener(event, listener);
    } else {
      setAttribute(element, key, value);
    }
  }
  append(element, ...children);
  return element;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

/** Replaces a node's children. */
export function replace(parent: Node, ...children: Child[]): void {
  while (parent.firstChild) parent.removeChild(parent.firstChild);
  append(parent, ...children);
}

/** A labelled form field: the label is tied to the control by id, for screen readers and clicks. */
export function field(label: string, control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement): HTMLElement {
  if (!control.id) control.id = `f-${label.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  return h('div', { class: 'field' }, h('label', { for: control.id }, label), control);
}

export function select(name: string, options: readonly (readonly [string, string])[], value: string): HTMLSelectElement {
  const element = h('select', { name });
  for (const [optionValue, text] of options) {
    const option = h('option', { value: optionValue }, text);
    if (optionValue === value) option.selected = true;
    element.append(option);
  }
  return element;
}

export function input(name: string, value: string, attrs: Attrs = {}): HTMLInputElement {
  const element = h('input', { name, type: 'text', autocomplete: 'off', ...attrs });
  element.value = value;
  return element;
}

/** A status line for errors and notices; role=status so screen readers announce it. */
export function notice(text: string, kind: 'error' | 'info' = 'info'): HTMLElement {
  return h('p', { class: `notice ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, text);
}
