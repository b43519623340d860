import { runProcess } from "@crm/service-kit";
import { loadConfig, start } from "./index";

runProcess(() => start(loadConfig(process.env)));
