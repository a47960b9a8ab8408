/** Style sheets imported for their effect (vite bundles them). */
declare module "*.css";
