import { describe, expect, it } from 'vitest';
import { parseSearchQuery, SearchQueryError } from '@herald/search';

const shape = (query: string) =>
  parseSearchQuery(query).alternatives.map((terms) => terms.map((term) => `${term.negated ? '-' : ''}${term.kind === 'word' ? (term.phrase ? `"${term.text}"` : term.text) : `~${term.text}`}`));

describe('parseSearchQuery', () => {
  it('reads words, phrases, OR and exclusions', () => {
    expect(shape('deploy staging')).toEqual([['deploy', 'staging']]);
    expect(shape('"sad cat" OR "fat rat"')).toEqual([['"sad cat"'], ['"fat rat"']]);
    expect(shape('deploy -staging NOT prod')).toEqual([['deploy', '-staging', '-prod']]);
    expect(shape('a | b')).toEqual([['a'], ['b']]);
  });

  it('splits CJK runs out as substrings, also inside mixed tokens', () => {
    expect(shape('deploy 部署')).toEqual([['deploy', '~部署']]);
    expect(shape('東京tower')).toEqual([['~東京', 'tower']]);
    expect(shape('🚀')).toEqual([['~🚀']]);
  });

  it('keeps only characters that cannot be tsquery syntax', () => {
    expect(shape("it's (a:* & !b)")).toEqual([['"it s"', 'a', 'b']]);
    expect(shape("'; DROP TABLE messages; --")).toEqual([['DROP', 'TABLE', 'messages']]);
    expect(shape('src/users/repository.ts.')).toEqual([['src/users/repository.ts']]);
  });

  it('treats an unbalanced quote as a stray character', () => {
    expect(shape('"deploy now')).toEqual([['deploy', 'now']]);
    expect(shape('deploy "')).toEqual([['deploy']]);
  });

  it('refuses queries with nothing to find', () => {
    for (const query of ['', '   ', 'OR AND NOT', '-deploy', '"" ()', '%_\\', 'x'.repeat(2049), 'a '.repeat(33)]) {
      expect(() => parseSearchQuery(query), query.slice(0, 20)).toThrow(SearchQueryError);
    }
  });
});
