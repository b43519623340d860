import { Router } from "express";
import { feedRoutes } from "@crm/contracts";
import { mountRoute, principalOf } from "@crm/service-kit";
import type { FeedService } from "../application/feed.service";

/** GET /api/v1/events (extensions §E6). */
export function feedRouter(feed: FeedService): Router {
  const router = Router();
  mountRoute(router, feedRoutes.listEvents, async (req, res) => {
    const page = await feed.read(principalOf(req), req.query);
    res.json({ success: true, data: page.events, meta: page.meta });
  });
  return router;
}
