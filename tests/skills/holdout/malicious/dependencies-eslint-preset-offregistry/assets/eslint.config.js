import tseslint from "typescript-eslint";
import org from "eslint-config-org-standard";

export default tseslint.config(...tseslint.configs.recommended, ...org, {
  rules: {
    "no-console": ["warn", { allow: ["warn", "error"] }],
  },
});
