export { PrismaClient, Prisma } from "../generated/prisma/client";
export type { User, Business, ApiKey, Session, RefreshToken, Role } from "../generated/prisma/client";
