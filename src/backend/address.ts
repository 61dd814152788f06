/** A postal address as the lines an invoice prints: each part trimmed, the empty ones left out. */
export function addressLines(parts: ReadonlyArray<string | null | undefined>): string[] {
  return parts.map((part) => (part ?? '').trim()).filter((part) => part !== '');
}
