import { createContext, useContext } from 'react';

/** The logged-in operator's name: what `holder`/`owner` say as `operator:<name>`. */
export const MeContext = createContext<string>('');
export const useMe = () => useContext(MeContext);
