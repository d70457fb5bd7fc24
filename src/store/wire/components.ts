import type { JsonObject, JsonValue } from '../../json/index.js';
import { keboolaComponentShape } from '../component-shape.js';
import type { Component } from '../types.js';
import { str } from './values.js';

/**
 * A component in Keboola's shape (`/v2/storage/components`): the registered component object, with
 * `configurations` appended for list responses, and the component a server's answer describes.
 */
export function componentToWire(c: Component, configurations?: JsonValue[]): JsonObject {
  const base = keboolaComponentShape(c);
  if (configurations) base.set('configurations', configurations);
  return base;
}

export function componentFromWire(v: JsonValue): Component {
  return { id: str(v, 'id'), type: str(v, 'type'), name: str(v, 'name'), definition: v };
}
