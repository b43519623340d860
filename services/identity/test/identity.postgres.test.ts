import { describePostgres } from "@crm/testing";
import { identitySuite } from "./identity.suite";

describePostgres("identity on PostgreSQL", () => identitySuite("postgres"));
