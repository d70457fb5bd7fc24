import type { JsonText } from './json-text.js';

/**
 * One generated differential case: what goes into the data folder (`config.json`'s parameters,
 * optionally `in/state.json`) and the API the local server plays. The configuration holds the
 * placeholder `BASE_URL` where the server's address goes, so a case is independent of the port.
 */
export interface DiffCase {
  parameters: JsonText;
  state?: JsonText;
  api: ApiModel;
}

export const BASE_URL = 'http://base.invalid';

/** How the API reads a page request; the configuration is generated to match it (mostly). */
export interface Paging {
  style: 'none' | 'pagenum' | 'offset' | 'cursor' | 'token' | 'url';
  pageParam: string;
  limitParam: string;
  offsetParam: string;
  cursorParam: string;
  tokenParam: string;
  firstPage: number;
}

export interface Envelope {
  /** records at the top level (an array body) or inside an object at `dataPath` */
  dataPath: string[] | null;
  /** a boolean-ish "more pages" flag at the top level */
  flag?: { key: string; style: 'bool' | 'int' | 'string'; omitAtEnd: boolean };
  /** the next page's URL at `key` */
  next?: {
    key: string[];
    form: 'absolute' | 'relative' | 'rooted' | 'query';
    atEnd: 'null' | 'missing' | 'empty' | 'false';
  };
  /** the next page's token at `key` (response.param) */
  token?: { key: string[]; atEnd: 'null' | 'missing' | 'empty' };
  /** the total number of records at `key` */
  total?: { key: string[]; asString: boolean };
  /** other top-level values returned with every page */
  extra?: [string, JsonText][];
}

export interface Collection {
  records: JsonText[];
  pageSize: number;
  envelope: Envelope;
  /** the page starting at record `atStart` fails: a status with a body, or a body that is not JSON */
  failure?: { atStart: number; status: number; body: string };
}

export interface ApiModel {
  paging: Paging;
  /** collection N answers paths holding the segment `cN` (children use c1, c2…) */
  collections: Collection[];
  /** the login endpoint's answer, when the configuration logs in */
  login?: JsonText;
}
