/**
 * Outbound webhooks (docs/api/webhooks.md): a workspace's endpoints, the deliveries of its events
 * to them and their attempts. Owners and admins only.
 */
import { z } from 'zod'
import {
  CreateWebhookEndpointInput,
  UpdateWebhookEndpointInput,
  WebhookDelivery,
  webhookDeliveries,
  WebhookDeliveryListInput,
  WebhookDeliveryPathInput,
  WebhookEndpoint,
  WebhookEndpointListInput,
  WebhookEndpointPathInput,
  webhookEndpoints,
  WebhookEndpointWithSecret,
} from '../src/webhooks/index.ts'
import { envelope, paginated } from '../src/access/wire.ts'
import { router, workspaceProcedure } from '../src/trpc/init.ts'

const tags = ['Webhooks']
const ENDPOINT = '/api/v1/webhook-endpoints/{endpoint_uuid}'
const DELIVERY = '/api/v1/webhook-deliveries/{delivery_uuid}'

export const webhooksRouter = router({
  list: workspaceProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/v1/webhook-endpoints', tags, summary: "The workspace's webhook endpoints", protect: true },
      errorStatuses: [403],
    })
    .input(WebhookEndpointListInput)
    .output(paginated(WebhookEndpoint))
    .query(({ ctx, input }) => webhookEndpoints.list(ctx, input)),

  create: workspaceProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/webhook-endpoints',
        tags,
        summary: 'Create a webhook endpoint; its secret is answered once',
        protect: true,
      },
      successStatus: 201,
    })
    .input(CreateWebhookEndpointInput)
    .output(envelope(WebhookEndpointWithSecret))
    .mutation(({ ctx, input }) => webhookEndpoints.create(ctx, input)),

  retrieve: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: ENDPOINT, tags, summary: 'Retrieve a webhook endpoint', protect: true }, errorStatuses: [403] })
    .input(WebhookEndpointPathInput)
    .output(envelope(WebhookEndpoint))
    .query(({ ctx, input }) => webhookEndpoints.retrieve(ctx, input.endpoint_uuid)),

  update: workspaceProcedure
    .meta({ openapi: { method: 'PUT', path: ENDPOINT, tags, summary: 'Change a webhook endpoint', protect: true } })
    .input(UpdateWebhookEndpointInput)
    .output(envelope(WebhookEndpoint))
    .mutation(({ ctx, input }) => webhookEndpoints.update(ctx, input)),

  delete: workspaceProcedure
    .meta({
      openapi: { method: 'DELETE', path: ENDPOINT, tags, summary: 'Delete a webhook endpoint and its deliveries', protect: true },
      successStatus: 204,
    })
    .input(WebhookEndpointPathInput)
    .output(z.void())
    .mutation(({ ctx, input }) => webhookEndpoints.remove(ctx, input.endpoint_uuid)),

  rotateSecret: workspaceProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: `${ENDPOINT}/rotate-secret`,
        tags,
        summary: 'A new signing secret, answered once; the old one signs too for 24 hours',
        protect: true,
      },
    })
    .input(WebhookEndpointPathInput)
    .output(envelope(WebhookEndpointWithSecret))
    .mutation(({ ctx, input }) => webhookEndpoints.rotateSecret(ctx, input.endpoint_uuid)),

  ping: workspaceProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: `${ENDPOINT}/ping`,
        tags,
        summary: 'Send a webhook_endpoint.ping event to the endpoint now',
        protect: true,
      },
      successStatus: 202,
    })
    .input(WebhookEndpointPathInput)
    .output(envelope(WebhookDelivery))
    .mutation(({ ctx, input }) => webhookEndpoints.ping(ctx, input.endpoint_uuid)),

  deliveries: workspaceProcedure
    .meta({
      openapi: { method: 'GET', path: `${ENDPOINT}/deliveries`, tags, summary: "An endpoint's deliveries, newest first", protect: true },
      errorStatuses: [403],
    })
    .input(WebhookDeliveryListInput)
    .output(paginated(WebhookDelivery))
    .query(({ ctx, input }) => webhookDeliveries.list(ctx, input)),

  delivery: workspaceProcedure
    .meta({
      openapi: { method: 'GET', path: DELIVERY, tags, summary: 'Retrieve a webhook delivery with its attempts', protect: true },
      errorStatuses: [403],
    })
    .input(WebhookDeliveryPathInput)
    .output(envelope(WebhookDelivery))
    .query(({ ctx, input }) => webhookDeliveries.retrieve(ctx, input.delivery_uuid)),

  redeliver: workspaceProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: `${DELIVERY}/redeliver`,
        tags,
        summary: 'Attempt a delivery again now, with the same webhook-id',
        protect: true,
      },
      successStatus: 202,
    })
    .input(WebhookDeliveryPathInput)
    .output(envelope(WebhookDelivery))
    .mutation(({ ctx, input }) => webhookDeliveries.redeliver(ctx, input.delivery_uuid)),
})
