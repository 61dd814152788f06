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
