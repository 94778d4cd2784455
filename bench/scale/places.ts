/**
 * A profile frame's function and place, for the profile readers (`stall.ts`, `allocations.ts`):
 * the path from `src/`, `node_modules/` or `bench/` on (the build's directory left out), else its
 * last two parts.
 */
export function frameName(callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }): string {
  const { functionName, url, lineNumber } = callFrame;
  const from = Math.max(url.lastIndexOf('/node_modules/'), url.lastIndexOf('/src/'), url.lastIndexOf('/bench/'));
  const place = from >= 0 ? url.slice(from + 1) : url.split('/').slice(-2).join('/');
  return `${functionName || '(anonymous)'} ${place}:${lineNumber + 1}`;
}
