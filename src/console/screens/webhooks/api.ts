/**
 * The webhooks area's data: the workspace's endpoints (`webhooks.list`), one endpoint
 * (`webhooks.retrieve`), its deliveries (`webhooks.deliveries`) and one delivery with its attempts
 * (`webhooks.delivery`); and what changes them: `webhooks.create` and `webhooks.rotateSecret`
 * (each answers the signing secret, once: it stays in the mutation's result, never in the query
 * cache, and that mutation is dropped as soon as its dialog resets it), `webhooks.update` (enable
 * or disable), `webhooks.delete`, `webhooks.ping` and
 * `webhooks.redeliver`.
 *
 * An endpoint answered is stored as its cached record and the endpoint lists are marked stale; a
 * ping or a redelivery stores the delivery answered and marks the endpoint's delivery lists
 * stale. Deliveries are read again every 1.5 s while one shown is pending; once none is, the
 * endpoint is read again (a failed attempt may have disabled it).
 */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useEffect, useRef } from 'react'
import type { RouterInputs, RouterOutputs } from '../../lib/api.ts'
import { useTRPC, type MutationConfig, type TRPC, updatingCache } from '../../lib/trpc.ts'
import type { Delivery, Endpoint } from './webhook-model.ts'

export type EndpointsInput = Exclude<RouterInputs['webhooks']['list'], void | undefined>
export type DeliveriesInput = RouterInputs['webhooks']['deliveries']
type Inputs = RouterInputs['webhooks']
type Outputs = RouterOutputs['webhooks']

/** How often deliveries are read again while one is pending. */
const DELIVERY_REFRESH_MS = 1500

const pending = (deliveries: Delivery[] | undefined) => Boolean(deliveries?.some((delivery) => delivery.status === 'pending'))

/** One page of endpoints; the previous page stays shown while the next loads. */
export const endpointsQueryOptions = (trpc: TRPC, input: EndpointsInput) =>
  trpc.webhooks.list.queryOptions(input, { placeholderData: keepPreviousData })

export function useEndpoints(input: EndpointsInput) {
  return useQuery(endpointsQueryOptions(useTRPC(), input))
}

export const endpointQueryOptions = (trpc: TRPC, endpointUuid: string) =>
  trpc.webhooks.retrieve.queryOptions({ endpoint_uuid: endpointUuid })

export function useEndpoint(endpointUuid: string) {
  return useQuery(endpointQueryOptions(useTRPC(), endpointUuid))
}

/** A page of an endpoint's deliveries, newest first, read again every 1.5 s while one of them is pending. */
export const deliveriesQueryOptions = (trpc: TRPC, input: DeliveriesInput) =>
  trpc.webhooks.deliveries.queryOptions(input, {
    placeholderData: keepPreviousData,
    refetchInterval: (query) => (pending(query.state.data?.data) ? DELIVERY_REFRESH_MS : false),
  })

/** The deliveries of `input`; when the last pending one of them ends, the endpoint and the lists are read again. */
export function useDeliveries(input: DeliveriesInput) {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  const deliveries = useQuery(deliveriesQueryOptions(trpc, input))
  const busy = pending(deliveries.data?.data)
  const wasBusy = useRef(busy)
  useEffect(() => {
    if (wasBusy.current && !busy) {
      void queryClient.invalidateQueries(trpc.webhooks.retrieve.queryFilter({ endpoint_uuid: input.endpoint_uuid }))
      void queryClient.invalidateQueries(trpc.webhooks.list.pathFilter())
    }
    wasBusy.current = busy
  }, [busy, queryClient, trpc, input.endpoint_uuid])
  return deliveries
}

/** One delivery with its attempts, read again every 1.5 s while it is pending. */
export const deliveryQueryOptions = (trpc: TRPC, deliveryUuid: string) =>
  trpc.webhooks.delivery.queryOptions(
    { delivery_uuid: deliveryUuid },
    { refetchInterval: (query) => (query.state.data?.data.status === 'pending' ? DELIVERY_REFRESH_MS : false) },
  )

export function useDelivery(deliveryUuid: string) {
  return useQuery(deliveryQueryOptions(useTRPC(), deliveryUuid))
}

/** Stores an endpoint answered (without its secret) as the cached record and marks the endpoint lists stale. */
function useStoreEndpoint() {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  return (answer: { data: Endpoint & { secret?: string } }) => {
    const { secret: _secret, ...endpoint } = answer.data
    queryClient.setQueryData(trpc.webhooks.retrieve.queryKey({ endpoint_uuid: endpoint.uuid }), { data: endpoint })
    void queryClient.invalidateQueries(trpc.webhooks.list.pathFilter())
  }
}

/** Creates an endpoint; the answer carries its secret, shown once. */
export function useCreateEndpoint(config?: MutationConfig<Outputs['create'], Inputs['create']>) {
  const store = useStoreEndpoint()
  return useMutation(useTRPC().webhooks.create.mutationOptions({ ...updatingCache(config, store), gcTime: 0 }))
}

/** Changes an endpoint: here, turns it active (which clears why it was disabled) or inactive. */
export function useUpdateEndpoint(config?: MutationConfig<Outputs['update'], Inputs['update']>) {
  const store = useStoreEndpoint()
  return useMutation(useTRPC().webhooks.update.mutationOptions(updatingCache(config, store)))
}

/** A new signing secret, answered once; the previous one signs too for 24 hours. */
export function useRotateSecret(config?: MutationConfig<Outputs['rotateSecret'], Inputs['rotateSecret']>) {
  const store = useStoreEndpoint()
  return useMutation(useTRPC().webhooks.rotateSecret.mutationOptions({ ...updatingCache(config, store), gcTime: 0 }))
}

/** Deletes an endpoint with its deliveries; its queries are dropped and the lists marked stale. */
export function useDeleteEndpoint(config?: MutationConfig<Outputs['delete'], Inputs['delete']>) {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  return useMutation(
    trpc.webhooks.delete.mutationOptions(
      updatingCache(config, (_answer, input) => {
        queryClient.removeQueries(trpc.webhooks.retrieve.queryFilter({ endpoint_uuid: input.endpoint_uuid }))
        queryClient.removeQueries(trpc.webhooks.deliveries.queryFilter({ endpoint_uuid: input.endpoint_uuid }))
        void queryClient.invalidateQueries(trpc.webhooks.list.pathFilter())
      }),
    ),
  )
}

/** Stores a delivery answered as its cached record and marks its endpoint's delivery lists stale. */
function useStoreDelivery() {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  return (answer: Outputs['delivery']) => {
    queryClient.setQueryData(trpc.webhooks.delivery.queryKey({ delivery_uuid: answer.data.uuid }), answer)
    void queryClient.invalidateQueries(trpc.webhooks.deliveries.queryFilter({ endpoint_uuid: answer.data.endpoint_uuid }))
  }
}

/** Sends a `webhook_endpoint.ping` event now; the answer is its delivery, pending until its one attempt ends. */
export function usePing(config?: MutationConfig<Outputs['ping'], Inputs['ping']>) {
  const store = useStoreDelivery()
  return useMutation(useTRPC().webhooks.ping.mutationOptions(updatingCache(config, store)))
}

/** Attempts a delivery again now, with the same `webhook-id`; pending until that attempt ends. */
export function useRedeliver(config?: MutationConfig<Outputs['redeliver'], Inputs['redeliver']>) {
  const store = useStoreDelivery()
  return useMutation(useTRPC().webhooks.redeliver.mutationOptions(updatingCache(config, store)))
}
