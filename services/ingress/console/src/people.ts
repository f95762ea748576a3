// A field that asks for a person suggests the people Herald knows, by id or name, from one route
// (GET /v1/people/suggestions) so that its source can change without the pages changing.
import { api, query } from './api.ts';
import { input } from './dom.ts';
import type { Attrs } from './dom.ts';
import type { PersonSuggestion, PersonSuggestions } from '../../src/contracts/people-views.ts';

const LIST_ID = 'people-suggestions';
const DELAY_MS = 150;

let known: PersonSuggestion[] = [];

function datalist(): HTMLDataListElement {
  const existing = document.getElementById(LIST_ID);
  if (existing instanceof HTMLDataListElement) return existing;
  const list = document.createElement('datalist');
  list.id = LIST_ID;
  document.body.append(list);
  return list;
}

async function suggest(text: string): Promise<void> {
  const { people } = await api<PersonSuggestions>('GET', `/v1/people/suggestions${query({ q: text.trim(), limit: 10 })}`);
  known = people;
  const list = datalist();
  list.replaceChildren(
    ...people.map((person) => {
      const option = document.createElement('option');
      option.value = person.user_id;
      // The name beside the id: a person is found by either.
      if (person.name) option.label = person.name;
      return option;
    }),
  );
}

/** A text input for a person's id, with suggestions as it is typed. */
export function personInput(name: string, value: string, attrs: Attrs = {}): HTMLInputElement {
  const element = input(name, value, { list: LIST_ID, ...attrs });
  let timer = 0;
  const refresh = () => {
    clearTimeout(timer);
    timer = window.setTimeout(() => void suggest(element.value).catch(() => undefined), DELAY_MS);
  };
  element.addEventListener('input', refresh);
  element.addEventListener('focus', refresh);
  return element;
}

/**
 * The id a person typed, or the id of the one person whose name it is exactly ("Alice Smith" is
 * <platform>:42 when only she has that name); anything else is taken as an id.
 */
export async function resolvePerson(text: string): Promise<string> {
  const value = text.trim();
  if (value === '') return value;
  await suggest(value).catch(() => undefined);
  // A bare id is the API's own (alice is api:alice): a known id wins over a name.
  if (known.some((person) => person.user_id === value || person.user_id === `api:${value}`)) return value;
  const named = known.filter((person) => person.name !== null && person.name.toLowerCase() === value.toLowerCase());
  return named.length === 1 ? named[0]!.user_id : value;
}
