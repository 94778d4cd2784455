/** snappyjs ships no types; these are the two functions of its index.js that this folder uses. */
declare module 'snappyjs' {
  export function compress(input: Uint8Array): Uint8Array;
  export function uncompress(input: Uint8Array, maxLength?: number): Uint8Array;
}
