/**
 * The dispatchers of undici the gateway uses, without the rest of undici. `import 'undici'` runs
 * its whole index (fetch, WebSocket, EventSource, the caches and the mocks), none of which the
 * gateway calls: 3 MB of heap and 8 MB resident more in every process (measured), against a
 * memory bound per process. undici has no "exports" map, so its classes load from their own files;
 * their types are the package's, and a test checks that they are the classes it exports.
 */
import { createRequire } from 'node:module';
import type * as Undici from 'undici';

const load = createRequire(import.meta.url);

const Dispatcher = load('undici/lib/dispatcher/dispatcher') as typeof Undici.Dispatcher;
// What undici's index does before it exports its dispatchers: their request(), stream(), … methods.
Object.assign(Dispatcher.prototype, load('undici/lib/api'));

export const Pool = load('undici/lib/dispatcher/pool') as typeof Undici.Pool;
export const Agent = load('undici/lib/dispatcher/agent') as typeof Undici.Agent;
export { Dispatcher };
/** Presents a handler written for undici's older interface (onConnect, onHeaders, …) through the current one (onRequestStart, …). */
export const WrapHandler = load('undici/lib/handler/wrap-handler') as { wrap(handler: Undici.Dispatcher.DispatchHandler): Undici.Dispatcher.DispatchHandler };
