/** Path parameters of the component-configuration routes (fastify URL-decodes them). */
export interface ComponentParams {
  componentId: string;
}

export interface ConfigParams extends ComponentParams {
  configId: string;
}

export interface ConfigVersionParams extends ConfigParams {
  version: string;
}

export interface RowParams extends ConfigParams {
  rowId: string;
}

export interface RowVersionParams extends RowParams {
  version: string;
}

export interface MetadataParams extends ConfigParams {
  metadataId: string;
}
