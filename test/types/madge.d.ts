// madge ships no types: the part of its API the import-cycle test uses (its README).
declare module 'madge' {
  export interface MadgeConfig {
    fileExtensions?: string[];
    tsConfig?: string;
    detectiveOptions?: Record<string, unknown>;
  }
  export interface MadgeInstance {
    circular(): string[][];
    obj(): Record<string, string[]>;
  }
  export default function madge(path: string | string[], config?: MadgeConfig): Promise<MadgeInstance>;
}
