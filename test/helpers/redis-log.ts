/**
 * A source-IP or account window log as the Redis store writes it (src/stores/redis/lua/rate-limit.lua):
 * a 13-byte header [version 2, origin (double, ms since the epoch), written (uint32, ms after origin)],
 * then each admit time as a uint32 of ms after origin, oldest first. Tests craft logs with it to reach
 * shapes that traffic takes long to make.
 */
export function windowLog(origin: number, written: number, offsets: readonly number[]): Buffer {
  const bytes = Buffer.alloc(13 + 4 * offsets.length);
  bytes.writeUInt8(2, 0);
  bytes.writeDoubleBE(origin, 1);
  bytes.writeUInt32BE(written, 9);
  offsets.forEach((offset, index) => bytes.writeUInt32BE(offset, 13 + 4 * index));
  return bytes;
}

/** A stored log's origin and admit times (ms since the epoch). */
export function readWindowLog(bytes: Buffer): { origin: number; written: number; times: number[] } {
  if (bytes.readUInt8(0) !== 2) throw new Error(`not a window log: version ${bytes.readUInt8(0)}`);
  const origin = bytes.readDoubleBE(1);
  const times = Array.from({ length: (bytes.length - 13) / 4 }, (_, index) => origin + bytes.readUInt32BE(13 + 4 * index));
  return { origin, written: bytes.readUInt32BE(9), times };
}
