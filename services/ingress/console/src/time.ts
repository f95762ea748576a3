// Times are shown in the browser's zone; a cron job's own zone goes beside it.

const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone;

export function browserTimeZone(): string {
  return browserZone;
}

export function formatTime(iso: string | null | undefined, timeZone?: string): string {
  if (iso === null || iso === undefined) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  try {
    return new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium', ...(timeZone ? { timeZone } : {}) }).format(date);
  } catch {
    // An unknown zone name: the browser's zone, said so by the caller's label.
    return new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' }).format(date);
  }
}

/** A <time> element: browser-zone text, the exact instant in its datetime attribute and tooltip. */
export function timeElement(iso: string | null | undefined): HTMLTimeElement {
  const element = document.createElement('time');
  element.textContent = formatTime(iso);
  if (iso) {
    element.dateTime = iso;
    element.title = `${iso} (UTC)`;
  }
  return element;
}

export function relative(iso: string | null | undefined): string {
  if (!iso) return '';
  const seconds = Math.round((new Date(iso).getTime() - Date.now()) / 1000);
  const format = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  const abs = Math.abs(seconds);
  if (abs < 60) return format.format(seconds, 'second');
  if (abs < 3600) return format.format(Math.round(seconds / 60), 'minute');
  if (abs < 86400) return format.format(Math.round(seconds / 3600), 'hour');
  return format.format(Math.round(seconds / 86400), 'day');
}

export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** A run time as read in a zone, weekday first ("Mon, Dec 7, 2026, 9:00 AM"): what a schedule preview shows. */
export function formatInZone(iso: string, timeZone: string): string {
  const date = new Date(iso);
  try {
    return new Intl.DateTimeFormat(undefined, { weekday: 'short', year: 'numeric', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZone }).format(date);
  } catch {
    return formatTime(iso);
  }
}
