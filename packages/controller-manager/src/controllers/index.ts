/**
 * Every controller of the controller manager, in the order they start (Kubernetes starts them in its own order;
 * informers they share start once all are started). Each entry is the definition exported by its folder.
 */
import { type ControllerDefinition } from '../controller';
import { garbageCollectorController } from './garbagecollector';
import { namespaceController } from './namespace';

export const CONTROLLERS: readonly ControllerDefinition[] = [
  // one line per controller: `deploymentController,` (import it above)
  namespaceController,
  garbageCollectorController,
];
