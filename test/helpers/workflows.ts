/** Shared pieces of the workflow tests. */

/** Keys of a workflow in a single response. */
export const WORKFLOW_KEYS = [
  'categories',
  'created_at',
  'deleted_at',
  'description',
  'edges',
  'has_webhook_secret',
  'is_active',
  'is_favorite',
  'is_owner',
  'is_template',
  'name',
  'nodes',
  'pin_data',
  'profile_photo_config',
  'profile_photo_url',
  'settings',
  'static_data',
  'trigger_count',
  'updated_at',
  'user',
  'uuid',
  'visibility',
  'webhook_url',
  'workspace',
]
