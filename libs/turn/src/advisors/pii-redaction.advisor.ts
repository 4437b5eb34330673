import { Injectable } from '@nestjs/common';
import {
  ParleyAdvisor,
  type Advisor,
  type AdvisorOutcome,
  type LlmContentPart,
  type LlmMessage,
  type LlmRequest,
} from '@parley/llm';

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;
/** 13 to 19 digits, optionally grouped by single spaces or dashes. */
const CARD = /(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])/g;
/** An optional +country code, then 7 to 12 more digits, optionally grouped (spaces, dots, dashes, parentheses). */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const PHONE = /(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]?\d{2,4}){1,3}(?![\w])/g;

export type PiiCounts = { email: number; card: number; phone: number };

/** Whether the digits pass the Luhn check (card numbers do, most other digit runs do not). */
export function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

/**
 * `text` with emails, Luhn-valid card numbers and phone numbers (7 to 15 digits, not an ISO
 * date) masked, counting each kind in `counts`.
 */
export function redactPii(text: string, counts: PiiCounts): string {
  return text
    .replace(EMAIL, () => (counts.email++, '[EMAIL]'))
    .replace(CARD, (m) => (luhn(m.replace(/\D/g, '')) ? (counts.card++, '[CARD]') : m))
    .replace(PHONE, (m) => {
      const digits = m.replace(/\D/g, '').length;
      return digits >= 7 && digits <= 15 && !ISO_DATE.test(m) ? (counts.phone++, '[PHONE]') : m;
    });
}

/**
 * `piiRedaction`: masks emails, phone numbers and card numbers (Luhn-checked) in every message the
 * model receives but the system prompt. Only the request is masked: the transcript keeps what
 * the user sent.
 */
@ParleyAdvisor({ name: 'piiRedaction', description: 'Masks emails, phone and card numbers in what goes to the model.' })
@Injectable()
export class PiiRedactionAdvisor implements Advisor {
  before(request: LlmRequest): AdvisorOutcome | void {
    const counts: PiiCounts = { email: 0, card: 0, phone: 0 };
    const messages = request.messages.map((m) => redactMessage(m, counts));
    if (counts.email + counts.card + counts.phone === 0) return;
    return { request: { ...request, messages }, note: { redactions: counts } };
  }
}

function redactMessage(m: LlmMessage, counts: PiiCounts): LlmMessage {
  switch (m.role) {
    case 'system':
      return m;
    case 'user':
      return {
        ...m,
        content:
          typeof m.content === 'string'
            ? redactPii(m.content, counts)
            : m.content.map((p): LlmContentPart => (p.type === 'text' ? { ...p, text: redactPii(p.text, counts) } : p)),
      };
    case 'assistant':
      return m.content === null ? m : { ...m, content: redactPii(m.content, counts) };
    case 'tool':
      return { ...m, content: redactPii(m.content, counts) };
  }
}
