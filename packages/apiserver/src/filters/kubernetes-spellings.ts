/**
 * `--kubernetes-client-compatibility=false`: the server answers only its own spellings. A path on a `.k8s.io` group
 * (`/apis/rbac.authorization.k8s.io/...`) is 404, a body in `application/vnd.kubernetes.protobuf` is 415, and
 * Accept ranges of Kubernetes' Protobuf or of the `meta.k8s.io` views are not matched (406 when nothing else is
 * acceptable). Discovery then lists no `.k8s.io` group (the installer and the aggregator ask
 * `kubernetesClientCompatibility`). With the option on (the default) this filter is not installed: the aliases cost
 * a request that uses the `.platform` spellings nothing.
 */
import { notAcceptable, PROTOBUF_MEDIA_TYPE, unsupportedMediaType } from '@platform/api';

import { notFoundPath } from '../endpoints/installer';
import { JSON_MEDIA_TYPE, SUPPORTED_OUTPUT, YAML_MEDIA_TYPE } from '../endpoints/negotiation/negotiate';
import { type Serializers, writeError } from '../endpoints/responses/writers';
import { type Middleware } from './request-info';

const K8S_GROUP_PATH = /^\/apis\/[^/?]+\.k8s\.io(?:[/?]|$)/;
const KUBERNETES_RANGE = /vnd\.kubernetes\.protobuf|g=meta\.k8s\.io/i;

/** The filter that refuses Kubernetes' spellings of groups and media types. */
export function kubernetesSpellingsRefused(serializers: Serializers): Middleware {
  return (req, res, next) => {
    if (K8S_GROUP_PATH.test(req.url ?? '')) return writeError(res, notFoundPath(), serializers);
    const contentType = req.headers['content-type'];
    if (contentType && /vnd\.kubernetes\.protobuf/i.test(contentType))
      return writeError(
        res,
        unsupportedMediaType(contentType, [JSON_MEDIA_TYPE, YAML_MEDIA_TYPE, PROTOBUF_MEDIA_TYPE]),
        serializers,
      );
    const accept = req.headers.accept;
    if (accept && KUBERNETES_RANGE.test(accept)) {
      const kept = accept.split(',').filter((r) => !KUBERNETES_RANGE.test(r));
      if (kept.length === 0) return writeError(res, notAcceptable(SUPPORTED_OUTPUT), serializers);
      req.headers.accept = kept.join(',');
    }
    next();
  };
}
