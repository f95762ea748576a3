/**
 * A Hermes home that cannot be imported as it is (a missing or corrupt state.db, a table without a
 * column every row needs, broken YAML or JSON): refused before anything is written, naming the
 * file, the table or folder, and the field.
 */
export class HomeError extends Error {
  override readonly name = 'HomeError';
}
