/**
 * A mail address as Herald accepts one to send to: the common dot-atom form of RFC 5322 (no quoted
 * local parts, no comments, no display name), ASCII only (internationalised domains in their xn--
 * form). Narrower than the RFC on purpose: whatever passes goes into an SMTP envelope and a To
 * header, so nothing that could end a header line or smuggle a second recipient may pass.
 */
const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const DOMAIN_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const TOP_LEVEL = /^([a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;

export type MailAddressCheck = { address: string } | { problem: string };

/** The address in its stored form (the domain in lower case), or why it is not one. */
export function checkMailAddress(text: string): MailAddressCheck {
  const at = text.lastIndexOf('@');
  if (text.length > 254 || at <= 0) return { problem: `'${printable(text)}' is not a mail address (write name@example.com)` };
  const local = text.slice(0, at);
  const domain = text.slice(at + 1).toLowerCase();
  if (local.length > 64 || !LOCAL_PART.test(local)) return { problem: `'${printable(text)}' is not a mail address: the part before @ is not valid` };
  const labels = domain.split('.');
  if (labels.length < 2 || !labels.every((label) => DOMAIN_LABEL.test(label)) || !TOP_LEVEL.test(labels[labels.length - 1] ?? '')) {
    return { problem: `'${printable(text)}' is not a mail address: '${printable(domain)}' is not a domain name` };
  }
  return { address: `${local}@${domain}` };
}

/** The domain of a checked address. */
export function mailDomainOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase();
}

/**
 * Whether HERALD_MAIL_ALLOWED_DOMAINS lets mail go to `address`: an entry allows its domain and
 * the domains under it (example.com allows ops.example.com); an empty list allows every domain.
 */
export function mailDomainAllowed(address: string, allowed: readonly string[]): boolean {
  if (allowed.length === 0) return true;
  const domain = mailDomainOf(address);
  return allowed.some((entry) => {
    const wanted = entry.toLowerCase().replace(/^\.+/, '');
    return domain === wanted || domain.endsWith(`.${wanted}`);
  });
}

/** A refused text, quoted without the characters that could break a log line or a header. */
function printable(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f]/g, '?').slice(0, 120);
}
