// js-yaml ships no types: yaml-source.ts describes the part of it that it uses (JsYaml).
declare module 'js-yaml';
