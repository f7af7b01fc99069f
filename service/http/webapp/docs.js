// Starts Swagger UI on the service's own OpenAPI document. The online spec validator
// is off: no request leaves this host.
window.ui = window.SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  validatorUrl: null,
  tryItOutEnabled: false,
  displayOperationId: true,
  defaultModelsExpandDepth: 0,
  presets: [window.SwaggerUIBundle.presets.apis],
});
