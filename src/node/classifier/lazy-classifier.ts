// A classifier that loads its model on first use (off the activation path). A model that fails to
// load makes every classification throw, which the pipeline turns into a block: a configured
// classifier that is broken never silently degrades to "no classifier".
import path from 'node:path';
import type { InjectionClassifier } from '../../engine/shield/pipeline';
import { loadOnnxClassifier } from './onnx-classifier';

export function lazyOnnxClassifier(modelDir: string): InjectionClassifier & { loaded(): Promise<InjectionClassifier> } {
  let loading: Promise<InjectionClassifier> | undefined;
  const loaded = () => (loading ??= loadOnnxClassifier(modelDir));
  return {
    id: `onnx:${path.basename(modelDir)}`,
    loaded,
    async injectionScore(text: string): Promise<number> {
      return (await loaded()).injectionScore(text);
    },
  };
}
