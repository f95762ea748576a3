import { SMTPServer } from 'smtp-server';
import type { SMTPServerAddress, SMTPServerSession } from 'smtp-server';
import { simpleParser } from 'mailparser';
import type { ParsedMail } from 'mailparser';

/** A mail as it arrived: the envelope and the parsed message. */
export interface ReceivedMail {
  envelopeTo: string[];
  mail: ParsedMail;
}

export interface TestSmtp {
  /** smtp://user:password@127.0.0.1:<port>, for HERALD_SMTP_URL. */
  url: string;
  user: string;
  password: string;
  received: ReceivedMail[];
  /** Refuse RCPT TO for `address` with `code` and `text`, `times` times (Infinity: always). */
  refuse(address: string, code: number, text: string, times?: number): void;
  /** RCPT TO attempts per address, refused or not. */
  attempts(address: string): number;
  close(): Promise<void>;
}

interface Refusal {
  code: number;
  text: string;
  left: number;
}

function refusalError(refusal: Refusal): Error & { responseCode: number } {
  return Object.assign(new Error(refusal.text), { responseCode: refusal.code });
}

/**
 * A real SMTP server (the smtp-server package, the one Nodemailer's authors test against) on
 * loopback: it requires a login, refuses recipients as told, and parses what it takes with mailparser.
 * No STARTTLS (the test has no certificate to offer), so AUTH is allowed in the clear here.
 */
export async function startTestSmtp(): Promise<TestSmtp> {
  const user = 'herald';
  const password = 'smtp-pass-7f3a9c';
  const received: ReceivedMail[] = [];
  const refusals = new Map<string, Refusal>();
  const tries = new Map<string, number>();
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === user && auth.password === password) callback(null, { user });
      else callback(Object.assign(new Error('535 authentication failed'), { responseCode: 535 }));
    },
    onRcptTo(address: SMTPServerAddress, _session: SMTPServerSession, callback) {
      const to = address.address.toLowerCase();
      tries.set(to, (tries.get(to) ?? 0) + 1);
      const refusal = refusals.get(to);
      if (refusal !== undefined && refusal.left > 0) {
        refusal.left--;
        callback(refusalError(refusal));
        return;
      }
      callback();
    },
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((mail) => {
          received.push({ envelopeTo: session.envelope.rcptTo.map((rcpt) => rcpt.address), mail });
          callback();
        })
        .catch((error: Error) => callback(error));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `smtp://${user}:${password}@127.0.0.1:${port}`,
    user,
    password,
    received,
    refuse(to, code, text, times = Infinity) {
      refusals.set(to.toLowerCase(), { code, text, left: times });
    },
    attempts: (to) => tries.get(to.toLowerCase()) ?? 0,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
