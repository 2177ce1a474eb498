/**
 * apiregistration.platform APIService (v1, and v1beta1 which Kubernetes 1.21 still serves with the same fields):
 * which server answers one group version of the API, the aggregator's routing table (model: kube-aggregator
 * `pkg/apis/apiregistration/v1/types.go`).
 */
import { type Static, type TObject } from '@sinclair/typebox';

import { object, opt, ptr, ref, req, t } from '../../schema/schema';
import { defineKind, type Kind, OBJECT_HEAD, schemaPrefix } from '../../scheme/kind';
import { AGE_COLUMN } from '../../table/table';

/** The API group of APIServices. */
export const APIREGISTRATION_GROUP = 'apiregistration.platform';

function apiServiceSchemas(version: string) {
  const P = schemaPrefix(APIREGISTRATION_GROUP, version);
  const ServiceReference = object(`${P}ServiceReference`, {
    namespace: opt(1, t.string(), 'Namespace of the service.'),
    name: opt(2, t.string(), 'Name of the service.'),
    port: opt(3, ptr(t.int32()), 'Port of the service that hosts the API. Defaults to 443. Must be 1-65535.'),
  });
  const Spec = object(`${P}APIServiceSpec`, {
    service: opt(
      1,
      ref(ServiceReference),
      'The service that hosts the API; unset: the group version is handled locally by this server.',
    ),
    group: opt(2, t.string(), 'The API group name this server hosts.'),
    version: opt(3, t.string(), 'The API version this server hosts, e.g. "v1".'),
    insecureSkipTLSVerify: opt(
      4,
      t.bool(),
      'Disables TLS certificate verification when talking to this server. Strongly discouraged; use caBundle.',
    ),
    caBundle: opt(5, t.bytes(), "PEM encoded CA bundle that validates the API server's serving certificate."),
    groupPriorityMinimum: req(
      7,
      t.int32(),
      "The minimum priority the group should have (1-20000); the group's order in discovery is the highest of its APIServices' values.",
    ),
    versionPriority: req(
      8,
      t.int32(),
      'The order of this version within its group (1-1000); higher first, ties ordered by the Kubernetes version rules.',
    ),
  });
  const Condition = object(`${P}APIServiceCondition`, {
    type: req(1, t.string(), 'Type is the type of the condition (Available).'),
    status: req(2, t.enumOf(['True', 'False', 'Unknown']), 'Status of the condition: True, False or Unknown.'),
    lastTransitionTime: opt(3, t.time(), 'Last time the condition transitioned from one status to another.'),
    reason: opt(4, t.string(), "Unique, one-word, CamelCase reason for the condition's last transition."),
    message: opt(5, t.string(), 'Human-readable message indicating details about last transition.'),
  });
  const Status = object(`${P}APIServiceStatus`, {
    conditions: opt(
      1,
      t.array(ref(Condition), {
        patchMergeKey: 'type',
        patchStrategy: 'merge',
        listType: 'map',
        listMapKeys: ['type'],
      }),
      'Current service state of the APIService.',
    ),
  });
  return object(
    `${P}APIService`,
    {
      ...OBJECT_HEAD,
      spec: opt(2, ref(Spec), 'Spec contains information for locating and communicating with a server.'),
      status: opt(3, ref(Status), 'Status contains derived information about an API server.'),
    },
    { description: 'APIService represents a server for a particular GroupVersion. Name must be "version.group".' },
  );
}

/** APIService v1, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const APIServiceSchema = apiServiceSchemas('v1');
/** APIService v1beta1, as in Kubernetes 1.21 (same fields as v1). */
export const APIServiceV1beta1Schema = apiServiceSchemas('v1beta1');
/** An APIService object in its JSON form. */
export type APIService = Static<typeof APIServiceSchema>;
/** One condition of an APIService's status. */
export type APIServiceCondition = NonNullable<NonNullable<APIService['status']>['conditions']>[number];

/** The `Available` condition of an APIService, if it has one. */
export function apiServiceCondition(o: APIService, type = 'Available'): APIServiceCondition | undefined {
  return o.status?.conditions?.find((c) => c.type === type);
}

function apiServiceKind<S extends TObject>(version: string, schema: S): Kind<S> {
  const view = (o: Static<S>): APIService => o as unknown as APIService;
  return defineKind({
    group: APIREGISTRATION_GROUP,
    version,
    kind: 'APIService',
    plural: 'apiservices',
    scope: 'Cluster',
    categories: ['api-extensions'],
    subresources: { status: { verbs: ['get', 'patch', 'update'] } },
    schema,
    defaults(o) {
      // SetDefaults_ServiceReference: the port of a service reference defaults to 443.
      const service = view(o).spec?.service;
      if (service) service.port ??= 443;
    },
    columns: [
      {
        name: 'Service',
        type: 'string',
        description: 'The reference to the service that hosts this API endpoint.',
        cell: (o) => {
          const s = view(o).spec?.service;
          return s ? `${s.namespace ?? ''}/${s.name ?? ''}` : 'Local';
        },
      },
      {
        name: 'Available',
        type: 'string',
        description: 'Whether this service is available.',
        cell: (o) => {
          const c = apiServiceCondition(view(o));
          if (!c) return 'Unknown';
          return c.status !== 'True' && c.reason ? `${c.status} (${c.reason})` : c.status;
        },
      },
      AGE_COLUMN,
    ],
  });
}

/** The APIService kind (v1): discovery facts, defaults and printer columns. */
export const APIServiceKind = apiServiceKind('v1', APIServiceSchema);
/** The APIService kind (v1beta1). */
export const APIServiceV1beta1Kind = apiServiceKind('v1beta1', APIServiceV1beta1Schema);
