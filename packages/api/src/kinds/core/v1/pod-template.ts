/** core/v1 PodTemplate: a stored pod template. */
import { type Static } from '@sinclair/typebox';

import { object, opt, ref } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../../scheme/kind';
import { formatLabels } from '../../printing';
import { defaultPodTemplate } from './pod-defaults';
import { PodTemplateSpecSchema } from './types';

const P = schemaPrefix('', 'v1');

/** PodTemplate, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const PodTemplateSchema = object(
  `${P}PodTemplate`,
  {
    ...OBJECT_HEAD,
    template: opt(2, ref(PodTemplateSpecSchema), 'The pods created from this template.'),
  },
  { description: 'PodTemplate describes a template for creating copies of a predefined pod.' },
);
/** A PodTemplate object in its JSON form. */
export type PodTemplate = Static<typeof PodTemplateSchema>;

/** The PodTemplate kind: discovery facts, defaults, printer columns and field selectors. */
export const PodTemplateKind = defineKind({
  group: '',
  version: 'v1',
  kind: 'PodTemplate',
  plural: 'podtemplates',
  scope: 'Namespaced',
  schema: PodTemplateSchema,
  defaults(pt) {
    defaultPodTemplate(pt.template);
  },
  columns: [
    {
      name: 'Containers',
      type: 'string',
      description: 'Names of each container in the template.',
      cell: (o) => (o.template?.spec?.containers ?? []).map((c) => c.name).join(','),
    },
    {
      name: 'Images',
      type: 'string',
      description: 'Images referenced by each container in the template.',
      cell: (o) => (o.template?.spec?.containers ?? []).map((c) => c.image ?? '').join(','),
    },
    {
      name: 'Pod Labels',
      type: 'string',
      description: 'Labels of the pods.',
      cell: (o) => formatLabels(o.template?.metadata?.labels),
    },
  ],
});
