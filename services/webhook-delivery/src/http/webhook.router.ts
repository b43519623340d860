import { Router, type Request } from "express";
import { auditContextOf } from "@crm/audit";
import { CUSTOM_FIELD_TYPES_HEADER, type DefinedCustomFields, definedCustomFieldsOf, ok, okList, webhookRoutes } from "@crm/contracts";
import { paginationMeta, parsePagination } from "@crm/query-language";
import { mountRoute, principalOf, requestBody } from "@crm/service-kit";
import { WebhookService, type WebhookServiceDeps } from "../application/webhook.service";
import type { Webhook } from "../generated/prisma/client";
import { deliveryView, webhookView, webhookWithSecretView } from "../application/webhook-views";

export type WebhookRouterDeps = WebhookServiceDeps;

/** The `{id}` webhook of the caller's business, or 404001: looked up before the body is read, as every webhook route answers. */
function webhookOf(webhooks: WebhookService, req: Request): Promise<Webhook> {
  return webhooks.get(principalOf(req).businessId, String(req.params["id"]));
}

/** The business's active custom fields the gateway looked up for this write's filter (extensions §E1.5 with §E4), if any. */
function definedFieldsOf(req: Request): DefinedCustomFields | undefined {
  return definedCustomFieldsOf(req.headers[CUSTOM_FIELD_TYPES_HEADER]);
}

export function webhookRouter(deps: WebhookRouterDeps): Router {
  const router = Router();
  const webhooks = new WebhookService(deps);

  mountRoute(router, webhookRoutes.create, async (req, res) => {
    const principal = principalOf(req);
    const { webhook, secret } = await webhooks.create(principal.businessId, requestBody(webhookRoutes.create, req), principal, auditContextOf(req), definedFieldsOf(req));
    res.status(201).json(ok(webhookWithSecretView(webhook, secret)));
  });

  mountRoute(router, webhookRoutes.list, async (req, res) => {
    const page = parsePagination(req.query);
    const { rows, total } = await webhooks.list(principalOf(req).businessId, page);
    res.json(
      okList(
        rows.map((row) => webhookView(row)),
        paginationMeta(total, page.page, page.perPage),
      ),
    );
  });

  mountRoute(router, webhookRoutes.get, async (req, res) => {
    res.json(ok(webhookView(await webhookOf(webhooks, req))));
  });

  mountRoute(router, webhookRoutes.update, async (req, res) => {
    const current = await webhookOf(webhooks, req);
    res.json(ok(webhookView(await webhooks.update(current, requestBody(webhookRoutes.update, req), principalOf(req), auditContextOf(req), definedFieldsOf(req)))));
  });

  mountRoute(router, webhookRoutes.deactivate, async (req, res) => {
    res.json(ok(webhookView(await webhooks.deactivate(await webhookOf(webhooks, req), auditContextOf(req)))));
  });

  mountRoute(router, webhookRoutes.test, async (req, res) => {
    res.status(201).json(ok(deliveryView(await webhooks.sendTest(await webhookOf(webhooks, req)))));
  });

  mountRoute(router, webhookRoutes.rotateSecret, async (req, res) => {
    const current = await webhookOf(webhooks, req);
    const { webhook, secret, at } = await webhooks.rotateSecret(current, requestBody(webhookRoutes.rotateSecret, req), auditContextOf(req));
    res.json(ok(webhookWithSecretView(webhook, secret, at)));
  });

  mountRoute(router, webhookRoutes.listDeliveries, async (req, res) => {
    const page = parsePagination(req.query);
    const { rows, total } = await webhooks.deliveries(await webhookOf(webhooks, req), page);
    res.json(okList(rows.map(deliveryView), paginationMeta(total, page.page, page.perPage)));
  });

  mountRoute(router, webhookRoutes.retryDelivery, async (req, res) => {
    const webhook = await webhookOf(webhooks, req);
    res.status(202).json(ok(deliveryView(await webhooks.retryDelivery(webhook, String(req.params["deliveryId"])))));
  });

  mountRoute(router, webhookRoutes.recover, async (req, res) => {
    const webhook = await webhookOf(webhooks, req);
    res.status(202).json(ok(await webhooks.recover(webhook, requestBody(webhookRoutes.recover, req))));
  });

  return router;
}
