import { z } from 'zod';
import { IdSchema } from '../../v1/schemas.js';

/** `{id}` path parameter of every record route. */
export const IdParamsSchema = z.strictObject({ id: IdSchema });
