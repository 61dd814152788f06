/** A minimal upstream protocol for the client's tests: GET or POST `/<action>`, a JSON object answered with 200. */
import { isPlainObject, parseJsonBody, unreadableAnswer } from '../../src/upstream/answers.js';
import type { UpstreamProtocol } from '../../src/upstream/client.js';
import type { ActionTable } from '../../src/upstream/policy.js';

const redact = (text: string) => text;

export function toyProtocol<Id extends string>(actions: ActionTable<Id>, probe: Id): UpstreamProtocol<Id, Record<string, string>, Record<string, unknown>> {
  return {
    label: 'Toy',
    actions,
    probe,
    probeParams: {},
    request: (action) => ({ method: action.safety === 'write' ? 'POST' : 'GET', path: `/${action.name}`, headers: {} }),
    callKey: (action) => action.name,
    read(action, { statusCode, body }) {
      const parsed = parseJsonBody(body);
      if (statusCode !== 200 || !isPlainObject(parsed)) throw unreadableAnswer('Toy', action, `HTTP ${statusCode}`, redact);
      return parsed;
    },
    redact,
  };
}
