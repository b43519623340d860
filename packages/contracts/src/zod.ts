// zod with OpenAPI metadata support, so the schemas that validate requests also describe them.
import { extendZodWithOpenApi } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";

extendZodWithOpenApi(z);

export { z };
