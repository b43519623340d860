import { runProcess } from "@crm/service-kit";
import { loadConfig } from "./config";
import { start } from "./start";

runProcess(() => start(loadConfig(process.env)));
